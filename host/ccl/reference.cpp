#include "ccl/reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "common/numeric.h"

namespace weft::ccl {
namespace {

uint64_t splitmix(uint64_t& s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double load(abi::DataType t, const uint8_t* p, uint64_t i) {
    switch (t) {
        case abi::kF32: {
            float f;
            std::memcpy(&f, p + 4 * i, 4);
            return f;
        }
        case abi::kI32: {
            int32_t v;
            std::memcpy(&v, p + 4 * i, 4);
            return v;
        }
        case abi::kBF16: {
            uint16_t h;
            std::memcpy(&h, p + 2 * i, 2);
            return num::bf16_to_f32(h);
        }
        case abi::kF16: {
            uint16_t h;
            std::memcpy(&h, p + 2 * i, 2);
            return num::f16_to_f32(h);
        }
    }
    return 0;
}

void store(abi::DataType t, uint8_t* p, uint64_t i, double v) {
    switch (t) {
        case abi::kF32: {
            float f = static_cast<float>(v);
            std::memcpy(p + 4 * i, &f, 4);
            break;
        }
        case abi::kI32: {
            int32_t x = static_cast<int32_t>(v);
            std::memcpy(p + 4 * i, &x, 4);
            break;
        }
        case abi::kBF16: {
            uint16_t h = num::f32_to_bf16(static_cast<float>(v));
            std::memcpy(p + 2 * i, &h, 2);
            break;
        }
        case abi::kF16: {
            uint16_t h = num::f32_to_f16(static_cast<float>(v));
            std::memcpy(p + 2 * i, &h, 2);
            break;
        }
    }
}

// Unit roundoff: the largest relative error of one rounding to the type.
double unit_roundoff(abi::DataType t) {
    switch (t) {
        case abi::kF32: return std::ldexp(1.0, -24);
        case abi::kBF16: return std::ldexp(1.0, -8);
        case abi::kF16: return std::ldexp(1.0, -11);
        default: return 0;
    }
}

// How far a reduction of n values may be from the exact one when each of its
// n - 1 steps rounds to the type (the math engine stores every partial result
// in the tensor's type), whatever order the algorithm reduces in: the
// classic bound gamma(n-1) = (n-1)u / (1 - (n-1)u) times the sum of the
// magnitudes (for a product, the product of them).
double reduction_tolerance(abi::DataType t, uint32_t n, double magnitude) {
    const double k = n > 1 ? n - 1 : 0, u = unit_roundoff(t);
    return k * u / (1 - k * u) * magnitude;
}

struct Expect {
    double value, tolerance;
};

class Reducer {
public:
    Reducer(const OpRequest& r, const OpData& in) : r_(r), in_(in), n_(static_cast<uint32_t>(in.input.size())) {}
    // The reduction over all ranks of input element i.
    Expect at(uint64_t i) const {
        if (r_.dtype == abi::kI32) return {double(int32_at(i)), 0.0};
        double acc = load(r_.dtype, in_.input[0].data(), i), mag = std::fabs(acc);
        for (uint32_t k = 1; k < n_; ++k) {
            const double x = load(r_.dtype, in_.input[k].data(), i);
            switch (r_.redop) {
                case abi::kMathSum: acc += x, mag += std::fabs(x); break;
                case abi::kMathProd: acc *= x, mag *= std::fabs(x); break;
                case abi::kMathMax: acc = std::max(acc, x); break;
                case abi::kMathMin: acc = std::min(acc, x); break;
                case abi::kMathSemInc: break;  // never a request's reduction (parse_redop)
            }
        }
        const bool exact = r_.redop == abi::kMathMax || r_.redop == abi::kMathMin;
        return {acc, exact ? 0.0 : reduction_tolerance(r_.dtype, n_, mag)};
    }

private:
    // i32 sums and products wrap round 2^32 as the math engine's do (and
    // NCCL's): in any order the same bits, which a double stops holding once
    // a product of 36 chips' inputs passes 2^53.
    int32_t int32_at(uint64_t i) const {
        auto at = [&](uint32_t k) {
            int32_t v;
            std::memcpy(&v, in_.input[k].data() + 4 * i, 4);
            return v;
        };
        int32_t acc = at(0);
        for (uint32_t k = 1; k < n_; ++k) {
            const int32_t x = at(k);
            switch (r_.redop) {
                case abi::kMathSum: acc = static_cast<int32_t>(uint32_t(acc) + uint32_t(x)); break;
                case abi::kMathProd: acc = static_cast<int32_t>(uint32_t(acc) * uint32_t(x)); break;
                case abi::kMathMax: acc = std::max(acc, x); break;
                case abi::kMathMin: acc = std::min(acc, x); break;
                case abi::kMathSemInc: break;
            }
        }
        return acc;
    }

    const OpRequest& r_;
    const OpData& in_;
    uint32_t n_;
};

class Checker {
public:
    Checker(const OpRequest& r, CheckResult& res) : r_(r), res_(res) {}
    // Replicated outputs hold the same bits on every rank: element i of `out`
    // against the first rank's. The element was counted once, by compare().
    void same_bits(uint32_t chip, std::span<const uint8_t> out, uint32_t first_chip, std::span<const uint8_t> first,
                   uint64_t i, uint32_t element_size) {
        if (std::memcmp(out.data() + i * element_size, first.data() + i * element_size, element_size) == 0) return;
        if (res_.wrong++ == 0) {
            std::ostringstream s;
            s << "chip " << chip << " output element " << i << ": " << load(r_.dtype, out.data(), i)
              << " is not bit for bit chip " << first_chip << "'s " << load(r_.dtype, first.data(), i);
            res_.first_wrong = s.str();
        }
    }
    bool compare(uint32_t chip, std::span<const uint8_t> out, uint64_t i, Expect e) {
        ++res_.checked;
        const double got = load(r_.dtype, out.data(), i);
        if (std::fabs(got - e.value) <= e.tolerance) return true;
        if (std::isnan(got) && std::isnan(e.value)) return true;
        if (res_.wrong++ == 0) {
            std::ostringstream s;
            s << "chip " << chip << " output element " << i << ": got " << got << ", expected " << e.value;
            if (e.tolerance > 0) s << " (tolerance " << e.tolerance << ")";
            res_.first_wrong = s.str();
        }
        return false;
    }

private:
    const OpRequest& r_;
    CheckResult& res_;
};

}  // namespace

OpData make_inputs(const OpRequest& r, const OpLayout& l, uint32_t seed) {
    OpData d;
    const uint32_t n = l.ranks;
    for (uint32_t c = 0; c < n; ++c) {
        std::vector<uint8_t> buf(l.input_bytes);
        uint64_t s = (uint64_t(seed) << 32) ^ (c * 0x51ed27ull + 1);
        const uint64_t count = l.input_bytes / l.element;
        for (uint64_t i = 0; i < count; ++i) {
            const double u = double(splitmix(s) >> 11) / double(1ull << 53);  // [0, 1)
            double v;
            if (r.dtype == abi::kI32)
                v = r.redop == abi::kMathProd ? std::floor(u * 7) - 3 : std::floor(u * 2001) - 1000;
            else
                v = r.redop == abi::kMathProd ? 0.5 + u : 2 * u - 1;
            store(r.dtype, buf.data(), i, v);
        }
        d.input.push_back(std::move(buf));
    }
    return d;
}

CheckResult check_outputs(const OpRequest& r, const OpLayout& l, const OpData& in,
                          const std::vector<std::vector<uint8_t>>& outputs, const std::vector<uint32_t>& ring) {
    return check_outputs(r, l, in, std::vector<std::span<const uint8_t>>(outputs.begin(), outputs.end()), ring);
}

CheckResult check_outputs(const OpRequest& r, const OpLayout& l, const OpData& in,
                          const std::vector<std::span<const uint8_t>>& out, const std::vector<uint32_t>& ring) {
    CheckResult res;
    Checker ck(r, res);
    Reducer red(r, in);
    const uint32_t n = l.ranks;
    auto copy_of = [&](uint32_t from_chip, uint64_t j) {
        return Expect{load(r.dtype, in.input[from_chip].data(), j), 0.0};
    };
    // Where element j of rank k's block lands in a gathered output.
    auto gathered = [&](uint32_t k, uint64_t j) {
        if (l.inner > 0 && l.outer > 1) {
            const uint64_t inner = l.inner / l.element;
            return (j / inner) * n * inner + k * inner + j % inner;
        }
        return l.block_first[k] + j;
    };
    switch (r.op) {
        case Collective::kAllGather:
        case Collective::kGather:
            for (uint32_t c = 0; c < n; ++c) {
                if (r.op == Collective::kGather && c != r.root) continue;
                for (uint32_t k = 0; k < n; ++k)
                    for (uint64_t j = 0; j < l.block_elems[k]; ++j)
                        ck.compare(c, out[c], gathered(k, j), copy_of(k, j));
            }
            break;
        case Collective::kReduceScatter:
            for (uint32_t c = 0; c < n; ++c)
                for (uint64_t j = 0; j < l.block_elems[c]; ++j) ck.compare(c, out[c], j, red.at(l.block_first[c] + j));
            break;
        case Collective::kAllReduce:
        case Collective::kReduce:
            for (uint64_t i = 0; i < l.elements; ++i) {
                const Expect e = red.at(i);
                for (uint32_t c = 0; c < n; ++c) {
                    if (r.op != Collective::kAllReduce && c != r.root) continue;
                    if (ck.compare(c, out[c], i, e) && r.op == Collective::kAllReduce && c > 0)
                        ck.same_bits(c, out[c], 0, out[0], i, l.element);
                }
            }
            break;
        case Collective::kBroadcast:
            for (uint32_t c = 0; c < n; ++c)
                for (uint64_t i = 0; i < l.elements; ++i) ck.compare(c, out[c], i, copy_of(r.root, i));
            break;
        case Collective::kScatter:
            for (uint32_t c = 0; c < n; ++c)
                for (uint64_t j = 0; j < l.block_elems[c]; ++j)
                    ck.compare(c, out[c], j, copy_of(r.root, l.block_first[c] + j));
            break;
        case Collective::kSendRecv:
            for (uint32_t p = 0; p < n; ++p) {
                const uint32_t c = ring[p], from = ring[(p + n - 1) % n];
                for (uint64_t i = 0; i < l.elements; ++i) ck.compare(c, out[c], i, copy_of(from, i));
            }
            break;
    }
    return res;
}

}  // namespace weft::ccl
