// The Catch2 main() for all of epgraph's Catch test executables; compiled once
// (CMake target epgraph_catch_main).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
