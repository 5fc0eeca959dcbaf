// The host reference collective results are checked against
// (host/ccl/reference.cpp): a float all-reduce within the rounding bound of
// n - 1 steps, and every rank bit for bit equal to the others.
#include <cmath>
#include <cstring>

#include "ccl/reference.h"
#include "common/eltwise.h"
#include "common/numeric.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;
using namespace weft::ccl;

namespace {

struct Case {
    OpRequest r;
    OpLayout l;
    OpData in;
    std::vector<std::vector<uint8_t>> out;
    std::vector<uint32_t> ring;

    Case(abi::DataType dtype, uint32_t n, uint64_t elements) {
        r.op = Collective::kAllReduce;
        r.dtype = dtype;
        r.bytes = elements * (dtype == abi::kF32 || dtype == abi::kI32 ? 4 : 2);
        l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
        in = make_inputs(r, l, 3);
        for (uint32_t c = 0; c < n; ++c) ring.push_back(c);
    }
    // Every rank's output: the inputs summed in rank order, each step rounded to the type.
    void sum_in_order() {
        out.assign(l.ranks, std::vector<uint8_t>(l.output_bytes));
        for (uint64_t i = 0; i < l.elements; ++i) {
            float acc = value(0, i);
            for (uint32_t k = 1; k < l.ranks; ++k) acc = round(acc + value(k, i));
            for (auto& o : out) put(o, i, acc);
        }
    }
    float value(uint32_t rank, uint64_t i) const { return get(in.input[rank], i); }
    float get(const std::vector<uint8_t>& b, uint64_t i) const {
        if (r.dtype == abi::kF32) {
            float f;
            std::memcpy(&f, b.data() + 4 * i, 4);
            return f;
        }
        uint16_t h;
        std::memcpy(&h, b.data() + 2 * i, 2);
        return r.dtype == abi::kBF16 ? num::bf16_to_f32(h) : num::f16_to_f32(h);
    }
    float round(float v) const {
        if (r.dtype == abi::kBF16) return num::bf16_to_f32(num::f32_to_bf16(v));
        if (r.dtype == abi::kF16) return num::f16_to_f32(num::f32_to_f16(v));
        return v;
    }
    void put(std::vector<uint8_t>& b, uint64_t i, float v) const {
        if (r.dtype == abi::kF32) {
            std::memcpy(b.data() + 4 * i, &v, 4);
            return;
        }
        const uint16_t h = r.dtype == abi::kBF16 ? num::f32_to_bf16(v) : num::f32_to_f16(v);
        std::memcpy(b.data() + 2 * i, &h, 2);
    }
    CheckResult check() const { return check_outputs(r, l, in, out, ring); }
};

void test_rounded_sums_in_one_order_pass(void**) {
    for (abi::DataType t : {abi::kF32, abi::kBF16, abi::kF16}) {
        Case c(t, 8, 4096);
        c.sum_in_order();
        const CheckResult res = c.check();
        if (res.wrong) fail_msg("%s", res.first_wrong.c_str());
        assert_int_equal(res.checked, 8 * 4096);  // each output element once: weft run says "N elements match"
    }
}

void test_a_rank_with_other_bits_fails(void**) {
    Case c(abi::kF32, 4, 64);
    c.sum_in_order();
    // One ulp off on rank 2: well within the rounding bound, but not rank 0's bits.
    float v = c.get(c.out[2], 17);
    v = std::nextafter(v, 10.0f);
    c.put(c.out[2], 17, v);
    const CheckResult res = c.check();
    assert_int_equal(res.wrong, 1);
    assert_non_null(strstr(res.first_wrong.c_str(), "chip 2 output element 17"));
    assert_non_null(strstr(res.first_wrong.c_str(), "is not bit for bit chip 0's"));
}

void test_bf16_tolerance_follows_the_rounding_steps(void**) {
    // 8 ranks, bf16: seven roundings of at most 2^-8 each bound the error by
    // about 0.028 of the sum of magnitudes; 0.05 of it is wrong.
    Case c(abi::kBF16, 8, 1);
    for (auto& input : c.in.input) c.put(input, 0, 0.5f);  // sum 4, magnitudes 4
    c.sum_in_order();
    assert_int_equal(c.check().wrong, 0);
    for (auto& o : c.out) c.put(o, 0, 4.0f + 0.2f);  // off by 0.05 of 4 on every rank
    const CheckResult res = c.check();
    assert_int_equal(res.wrong, 8);
    assert_non_null(strstr(res.first_wrong.c_str(), "tolerance"));
}

// An i32 product over 36 chips (4mesh3x3) leaves int32 and a double's 53
// bits: the math engine wraps round 2^32, and so must the reference.
void test_i32_products_wrap_as_the_math_engine_does(void**) {
    for (abi::MathOp op : {abi::kMathProd, abi::kMathSum}) {
        Case c(abi::kI32, 36, 1024);
        c.r.redop = op;
        c.in = make_inputs(c.r, c.l, 3);
        std::vector<uint8_t> acc = c.in.input[0];
        for (uint32_t k = 1; k < c.l.ranks; ++k)
            assert_true(eltwise(op, abi::kI32, acc.data(), c.in.input[k].data(), acc.data(), c.l.elements));
        c.out.assign(c.l.ranks, acc);
        const CheckResult res = c.check();
        if (res.wrong) fail_msg("%s", res.first_wrong.c_str());
        uint32_t overflowed = 0;  // the case must reach past int32, or it shows nothing
        for (uint64_t i = 0; i < c.l.elements; ++i) {
            double exact = 1;
            int32_t v;
            for (uint32_t k = 0; k < c.l.ranks; ++k) std::memcpy(&v, c.in.input[k].data() + 4 * i, 4), exact *= v;
            overflowed += std::fabs(exact) > 2147483647.0;
        }
        if (op == abi::kMathProd) assert_true(overflowed > 0);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounded_sums_in_one_order_pass),
        cmocka_unit_test(test_a_rank_with_other_bits_fails),
        cmocka_unit_test(test_bf16_tolerance_follows_the_rounding_steps),
        cmocka_unit_test(test_i32_products_wrap_as_the_math_engine_does),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
