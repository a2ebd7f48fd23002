// Attention reduced over positions in pieces: the numerics of every attention row on the CPU
// (prefill, decode, verification, restore), the reference's and the AVX2 path's alike.
//
// A query attending to positions [first, nCtx) reduces them piece by piece. Pieces have fixed
// absolute boundaries, multiples of kAttentionPiece, so a row's pieces depend on its own range
// only, never on the batch or on the threads. Each piece [a, b) gives a partial: its largest
// score m, the sum s of its weights exp(score - m) and the V sum acc of the weighted V rows,
// each computed in the backend's documented order from the first position the query has in
// the piece. The
// partials are merged in piece order into a running one: the first as it is; then for each next
// part k, when m_k > M (the running max), c = softmaxExp(M - m_k), t = fma(t, c, s_k),
// num[i] = fma(num[i], c, acc_k[i]), M = m_k; otherwise f = 1 when m_k == M, else
// softmaxExp(m_k - M), t = fma(s_k, f, t), num[i] = fma(acc_k[i], f, num[i]). Finally
// out[i] = num[i] * (1 / t). A range within one piece gives exactly what the unsplit reduction
// gave. Which thread computes which piece may vary;
// the result does not.
#pragma once

namespace hearth {

inline constexpr int kAttentionPiece = 256;  // positions per piece

// The first piece boundary after position p.
inline int attentionPieceEnd(int p) { return (p / kAttentionPiece + 1) * kAttentionPiece; }

}  // namespace hearth
