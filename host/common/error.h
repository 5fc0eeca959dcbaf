#pragma once
#include <stdexcept>
#include <string>

namespace weft {

// Every failure the host side reports is an Error whose message names what was
// wrong and, where it can, what to do about it.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A wait that ran past its deadline. The message carries the hang report.
class TimeoutError : public Error {
public:
    explicit TimeoutError(const std::string& what) : Error(what) {}
};

// A kernel trapped on a chip.
class FaultError : public Error {
public:
    explicit FaultError(const std::string& what) : Error(what) {}
};

// A core's L1 cannot hold what was asked of it: a smaller configuration
// (fewer slots, smaller packets) may fit where this one did not.
class L1Shortage : public Error {
public:
    explicit L1Shortage(const std::string& what) : Error(what) {}
};

}  // namespace weft
