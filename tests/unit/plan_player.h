// Plays an overlay plan (ccl/plan.h) on symbolic values, for tests of
// all-reduce algorithms: which rank's input each output element sums, in
// which order.
#pragma once
#include <stdint.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ccl/collective.h"
#include "ccl/plan.h"

namespace weft::ccl {

// Plays `plan` round by round on values of T in `mem` (by chip: element
// address -> value): a round's transfers all read before any writes, as
// they may run at once; a reduction writes reduce(with, incoming).
template <typename T, typename Reduce>
void play(const Plan& plan, const OpLayout& l, std::vector<std::map<uint64_t, T>>& mem, Reduce reduce) {
    auto elements_of = [&](const Pages& s) {
        std::vector<uint64_t> at;
        for (uint64_t pg = 0; pg < s.count; ++pg)
            for (uint64_t off = 0; off < s.page_size; off += l.element) at.push_back(s.base + pg * s.stride + off);
        return at;
    };
    uint32_t last = 0;
    for (const Transfer& t : plan.transfers) last = std::max(last, t.round);
    for (uint32_t round = 0; round <= last; ++round) {
        std::vector<std::pair<const Transfer*, std::vector<T>>> read;
        for (const Transfer& t : plan.transfers) {
            if (t.round != round) continue;
            std::vector<T> v;
            for (uint64_t a : elements_of(t.src)) v.push_back(mem[t.src_chip][a]);
            read.push_back({&t, v});
        }
        for (const auto& [t, v] : read) {
            const std::vector<uint64_t> dst = elements_of(t->dst);
            const std::vector<uint64_t> with = elements_of(t->with.bytes() ? t->with : t->dst);
            for (size_t i = 0; i < dst.size(); ++i)
                mem[t->dst_chip][dst[i]] = t->reduce ? reduce(mem[t->dst_chip][with[i]], v[i]) : v[i];
        }
    }
}

// Plays an all-reduce plan on expressions: rank r's input elements are "xr",
// a reduction writes "(with+incoming)". Returns [element][rank]: each rank's
// output elements (one play serves them all; a play per element made the 2D
// checks the unit tier's slowest).
inline std::vector<std::vector<std::string>> play_expressions(const Plan& plan, const OpLayout& l) {
    const uint32_t n = l.ranks;
    std::vector<std::map<uint64_t, std::string>> mem(n);
    for (uint32_t c = 0; c < n; ++c)
        for (uint64_t i = 0; i < l.elements; ++i) mem[c][l.input + i * l.element] = "x" + std::to_string(c);
    play(plan, l, mem, [](const std::string& a, const std::string& b) { return "(" + a + "+" + b + ")"; });
    std::vector<std::vector<std::string>> out(l.elements);
    for (uint64_t e = 0; e < l.elements; ++e)
        for (uint32_t c = 0; c < n; ++c) out[e].push_back(mem[c][l.output + e * l.element]);
    return out;
}

// "(A+B)" and "(B+A)" are the same bits (the math engine's reductions are
// commutative, common/eltwise.cpp): each sum's two operands put in one order.
inline std::string commuted(const std::string& e) {
    if (e.empty() || e[0] != '(') return e;
    int depth = 0;
    for (size_t i = 1; i + 1 < e.size(); ++i) {
        depth += e[i] == '(' ? 1 : e[i] == ')' ? -1 : 0;
        if (depth == 0 && e[i] == '+') {
            std::string a = commuted(e.substr(1, i - 1)), b = commuted(e.substr(i + 1, e.size() - i - 2));
            if (b < a) std::swap(a, b);
            return "(" + a + "+" + b + ")";
        }
    }
    return e;
}

// How many times rank k's input is in the (commuted) expression `e`.
inline size_t terms_of(const std::string& e, uint32_t k) {
    const std::string term = "x" + std::to_string(k);
    size_t count = 0;
    for (size_t at = e.find(term); at != std::string::npos; at = e.find(term, at + 1))
        if (at + term.size() == e.size() || !isdigit(static_cast<unsigned char>(e[at + term.size()]))) ++count;
    return count;
}

}  // namespace weft::ccl
