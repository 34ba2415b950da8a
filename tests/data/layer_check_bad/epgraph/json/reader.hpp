#pragma once
#include <nlohmann/json.hpp>

#include "../archive/zip.hpp"
#include "../ir/node.hpp"
