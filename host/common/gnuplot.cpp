#include "common/gnuplot.h"

#include "common/child_tool.h"
#include "common/error.h"

namespace weft {

void run_gnuplot(const std::vector<std::string>& args) { run_child_tool({"gnuplot", kGnuplotPackage, "charts"}, args); }

void check_gnuplot() {
    try {
        run_gnuplot({"-e", "set terminal pngcairo"});
    } catch (const Error& e) {
        const std::string what = e.what();
        if (what.find("unknown or ambiguous terminal") != std::string::npos)
            throw Error(std::string("this gnuplot has no pngcairo terminal; charts need Debian's ") + kGnuplotPackage);
        throw;
    }
}

}  // namespace weft
