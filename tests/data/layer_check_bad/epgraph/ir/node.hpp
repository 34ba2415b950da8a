#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "../error.hpp"
