#pragma once
#include <epgraph/passes/pass.hpp>
