#!/usr/bin/env python3
"""Writes tests/conformance/tokenizer_corpus.json: the strings on which Hearth's tokenizers are
compared with the oracle. Deterministic (no randomness), so the file only changes when this
script does. Run: python3 tests/conformance/make_corpus.py > tests/conformance/tokenizer_corpus.json
"""
import json

words = ["Hello", "world", "the", "The", "capital", "of", "France", "Paris", "don't", "I'm",
         "we'll", "they've", "she'd", "it's", "naïve", "café", "über", "Straße", "résumé", "coöperate"]
chinese = ["法国的首都是哪里？", "你好，世界！", "我爱自然语言处理。", "今天天气很好", "中文标点：，。！？；：“”‘’（）"]
japanese = ["こんにちは世界", "東京は日本の首都です。", "カタカナとひらがな", "ｶﾀｶﾅ半角", "日本語のテキスト、句読点。"]
korean = ["안녕하세요 세계", "서울은 한국의 수도입니다"]
other_scripts = ["Привет, мир!", "Γειά σου Κόσμε", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया",
                 "สวัสดีชาวโลก", "Xin chào thế giới", "Merhaba dünya", "Witaj świecie", "Ahoj světe"]
emoji = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷🇯🇵", "❤️", "🧑🏿‍💻 coding", "I ❤️ 🍕!", "🤖🤖🤖", "☃️ snow ⛄",
         "👩‍❤️‍💋‍👨", "🐈‍⬛ black cat", "1️⃣2️⃣3️⃣", "©️®️™️", "🫠 melting"]
combining = ["e\u0301", "a\u0308o\u0308u\u0308", "n\u0303", "\u1100\u1161\u11a8", "Z\u0351\u036b\u0343\u036a\u0302",
             "क्षत्रिय", "ﬁ ligature", "Å vs Å", "\u00e9 vs e\u0301", "x\u0300\u0301\u0302\u0303"]
code = [
    "def f(x):\n\treturn x * 2\n",
    "for (int i = 0; i < n; ++i) {\n    sum += a[i];\n}",
    "if x == 1:\n        print('one')\n    else:\n        pass",
    "SELECT * FROM users WHERE id = 42;",
    "<div class=\"a\">\n  <span>text</span>\n</div>",
    "fn main() { println!(\"{}\", 1 + 2); }",
    "const x = {a: 1, b: [2, 3]};\n\n\n// comment",
    "#include <stdio.h>\nint main(void) { return 0; }",
    "\t\t\tindented with tabs\n\t\tless\n\tleast",
    "key:\n  - item1\n  - item2\n    nested: true",
    "a  b   c    d     e",
    "line1\r\nline2\r\n",
    "    four spaces\n        eight spaces",
    "x=1;y=2;z=x+y",
    "λx. x + 1",
]
numbers = ["0", "7", "42", "123", "1234", "12345", "123456789", "3.14159", "-2.5e10", "1,000,000",
           "0x1F", "2024-06-01", "12:30:45", "v1.2.3", "100%", "$19.99", "1/2", "10^6", "٣٤٥", "一二三"]
urls = ["https://example.com/path?q=1&r=2#frag", "http://localhost:8080/", "user@example.org",
        "file:///usr/share/doc/README", "www.example.co.uk/a-b_c", "ftp://ftp.example.net/pub/x.tar.gz"]
special = ["<s>", "</s>", "<unk>", "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<start_of_turn>",
           "<end_of_turn>", "<bos>", "<eos>", "[INST]", "[/INST]", "<<SYS>>", "<|eot_id|>",
           "<|im_start|>user\nhi<|im_end|>", "text <s> inside", "<start_of_turn>model\nok<end_of_turn>",
           "<|start_header_id|>user<|end_header_id|>", "<pad>", "<mask>"]
whitespace = ["", " ", "  ", "\n", "\n\n", "\t", " \t \n ", "   \n\n\n   ", "\r\n", "\u00a0", "\u3000",
              "\u2003em space", "trailing   ", "   leading", " both "]
punct = ["Hello, world!", "Wait... what?!", "\"quoted\" and 'single'", "(parens) [brackets] {braces}",
         "a—b–c-d", "«guillemets»", "¿Qué?", "¡Hola!", "semi;colon:colon", "@#$%^&*", "~`|\\/",
         "....", "!!!", "???", "---", "___", "***bold***", "__init__", "snake_case_name", "CamelCaseName"]
sentences = [
    "The quick brown fox jumps over the lazy dog.",
    "Once upon a time, there was a little girl named Lily.",
    "What is the capital of France?",
    "I can't believe it's not butter!",
    "She said, \"Don't go there.\"",
    "In 1492, Columbus sailed the ocean blue.",
    "E = mc^2 is Einstein's famous equation.",
    "The temperature was -5°C at 6:00 a.m.",
    "Mr. Smith's dog barked 3 times.",
    "Please call +1 (555) 123-4567 before 5pm.",
]

corpus = []
corpus += words + chinese + japanese + korean + other_scripts + emoji + combining + code
corpus += numbers + urls + special + whitespace + punct + sentences
# Combinations: each word in several positions and with several neighbours.
for w in words:
    corpus += [" " + w, w + " ", w + "\n", w.upper(), w + "s", "(" + w + ")"]
for s in sentences[:5]:
    corpus += [s.lower(), s.upper(), "  " + s, s + "\n\n", s.replace(" ", "  ")]
for a, b in zip(chinese, emoji):
    corpus.append(a + " " + b)
for a, b in zip(japanese, numbers):
    corpus.append(a + b)
for a, b in zip(code[:5], special[:5]):
    corpus.append(a + b)
corpus.append(" ".join(sentences))
corpus.append("word " * 60)
corpus.append("a" * 200)
corpus.append("🙂" * 30)
corpus.append("\n".join(code))
seen, unique = set(), []
for s in corpus:
    if s not in seen:
        seen.add(s)
        unique.append(s)
json.dump({"cases": unique}, __import__("sys").stdout, ensure_ascii=False, indent=0)
print()
