// Errors as values at the engine's boundaries (STYLE.md 12): std::expected<T, Error>.
// Library code never exits or aborts on bad input; app/ maps an Error to the words a user reads.
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace hearth {

enum class ErrorCode {
    Io,  // file cannot be opened, read or mapped
    InvalidFormat,  // the bytes do not follow the format (GGUF, snapshot, ...)
    Unsupported,  // well-formed, but Hearth does not support it (type, architecture, ...)
    InvalidArgument,  // a caller passed something out of range
    OutOfMemory,  // an allocation the input asked for is too large
    Cancelled,
    Device,  // the compute device (a GPU) failed: a CUDA error, its memory exhausted mid-run
};

// A cause finer than the code, where the words a user reads differ (app/common/error_text.h).
enum class ErrorCause {
    None,
    FileCutOff,  // the file ends before data it declares: an incomplete download or copy
};

struct Error {
    ErrorCode code = ErrorCode::InvalidFormat;
    std::string message;  // names the field and, for files, the byte offset
    ErrorCause cause = ErrorCause::None;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(ErrorCode code, std::string message) {
    return std::unexpected<Error>(Error{code, std::move(message)});
}

}  // namespace hearth
