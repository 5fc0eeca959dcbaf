// weft --version's text: the project's version and, in a git checkout, the
// commit it was configured at (generated into the build tree as version.cpp).
#pragma once

namespace weft::cli {

const char* version_text();

}  // namespace weft::cli
