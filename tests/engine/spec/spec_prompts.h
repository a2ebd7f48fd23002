// Prompts for the speculative decoding tests and benchmark: passages to repeat or lightly
// edit, code to complete, and open-ended chat.
#pragma once

#include <string>
#include <vector>

namespace hearth::test {

inline const char* kSpecPassage =
    "The lighthouse keeper climbed the spiral stairs every evening at dusk. He wound the clockwork, "
    "trimmed the wick, and polished the great lens until it shone. Ships passing the rocky point "
    "saw the beam sweep across the water every ten seconds, and they knew they were safe.";

inline const char* kSpecCode =
    "def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\n"
    "def factorial(n):\n    result = 1\n    for i in range(1, n + 1):\n        result = result * i\n    return "
    "result\n\n"
    "def sum_of_squares(n):\n";

inline std::vector<std::string> specExactnessPrompts() {
    const std::string passage = kSpecPassage;
    return {
        "Repeat this passage word for word: " + passage,
        "Rewrite this passage, changing 'lighthouse keeper' to 'old sailor': " + passage,
        "Copy the following text exactly: The quick brown fox jumps over the lazy dog. The quick brown fox jumps over "
        "the lazy dog.",
        "Complete this Python code:\n" + std::string(kSpecCode),
        "List the numbers from 1 to 30 separated by commas.",
        "Write the alphabet in capital letters, separated by spaces.",
        "What is the capital of France? Answer in one sentence.",
        "Tell me a short story about a cat who finds a hat.",
        "Summarize in two sentences: " + passage,
        "Write a haiku about autumn leaves.",
        "Explain what a hash table is to a beginner.",
        "Translate to French: Good morning, how are you today?",
        "Give three tips for staying focused while studying.",
        "Write a JSON object with fields name, age and city for a person called Alice.",
        "Repeat the word 'hello' ten times.",
        "What are the primary colors? Repeat your answer twice.",
        "Write a SQL query that selects all users older than 30 from a table called users.",
        "Count backwards from 20 to 1.",
        "Describe the water cycle in simple words.",
        "Continue the pattern: red, green, blue, red, green, blue, red,",
        "Write a function in C that returns the maximum of two integers.",
        "Why is the sky blue? Keep it short.",
    };
}

// Open-ended chat: no passage to copy, little repetition.
inline std::vector<std::string> specChatPrompts() {
    return {"What would you do on a rainy Sunday afternoon, and why?",
            "Tell me about an interesting place you would like to visit someday.", "What makes a good friend?"};
}

}  // namespace hearth::test
