// Proves a kernel runs wherever it is loaded: its pointer table, vtable and
// constructor list hold absolute addresses the host loader must relocate.
// Returns 1321 when every one of them was relocated right.
#include "kernels/kernel.h"

namespace {

int one() { return 1; }
int two() { return 2; }
int three() { return 3; }

struct Base {
    virtual int value() const = 0;
};
struct Thousand : Base {
    int value() const override { return 1000; }
};

int constructed = 0;
struct Counter {
    Counter() { constructed = 1; }
};
Counter counter;  // runs through .init_array

}  // namespace

// Volatile and external, so the compiler must read these pointers from memory
// instead of folding the calls away.
int (*volatile reloc_probe_table[])() = {one, two, three};
Thousand reloc_probe_object;
Base* volatile reloc_probe_base = &reloc_probe_object;

extern "C" int kernel_main(weft::KernelArgs) {
    int v = reloc_probe_table[0]() + 10 * reloc_probe_table[1]() + 100 * reloc_probe_table[2]();
    return constructed ? v + reloc_probe_base->value() : -1;
}
