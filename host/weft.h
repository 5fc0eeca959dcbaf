// weft as a library: one header for a host program that drives a cluster.
//   #include <weft/host/weft.h>   (installed; in the build tree: "weft.h")
//   weft::init();                               // find the installed tools
//   auto cluster = weft::Cluster::start(weft::paths::cluster_file("pair"), "/tmp/my-run");
//   weft::ccl::CollectiveRunner run(*cluster);
//   weft::ccl::OpRequest r;                     // all_reduce f32 sum, algo auto
//   r.bytes = 1 << 20;
//   weft::ccl::CaseResult res = weft::ccl::run_case(run, *cluster, r, /*seed*/ 1);
// On buffers of one's own, NCCL's way (ccl/calls.h): write them with
// cluster->chip(c).write(addr, ...), then
//   weft::ccl::PendingOp op = weft::ccl::all_reduce(run, send, recv, count, weft::abi::kF32, weft::abi::kMathSum);
//   ... overlap host work ...
//   run.wait(op);                              // send == recv: in place
// Communicators, as ncclCommSplit: CollectiveRunner::split(*cluster, colour)
// gives a runner per colour over its chips (rank r = chips()[r]); runners
// over disjoint chips run their ops at once.
// Kernels: weft::load_kernel_image(path), Cluster::run({{chip, core, &kernel,
// KernelArgWords::of(args)}}, timeout). Every call that waits has a deadline
// and throws weft::FaultError / weft::TimeoutError (with the hang report).
#pragma once
#include <cstdlib>

#include "ccl/calls.h"
#include "ccl/op_case.h"
#include "ccl/runner.h"
#include "common/error.h"
#include "driver/cluster.h"
#include "driver/kernel_args.h"
#include "driver/kernel_image.h"
#include "driver/paths.h"

namespace weft {

// A program compiled against an installed weft (find_package(weft) and
// pkg-config define WEFT_TOOLS_DIR, the install prefix, as a bare path)
// finds the tools, firmware and boards of that install: including this
// header registers it. $WEFT_BUILD_DIR, when set, wins.
#define WEFT_STRINGIFY_(x) #x
#define WEFT_STRINGIFY(x) WEFT_STRINGIFY_(x)
#ifdef WEFT_TOOLS_DIR
inline const bool weft_installed_prefix_registered = paths::set_installed_prefix(WEFT_STRINGIFY(WEFT_TOOLS_DIR));
#endif

// Kept for programs written against 0.7, which called it first; the header
// now does its work. Deprecated.
[[deprecated("including weft.h finds the install; init() does nothing more")]] inline void init() {}

}  // namespace weft
