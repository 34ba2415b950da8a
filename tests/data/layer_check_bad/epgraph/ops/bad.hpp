#pragma once
#include "../error.hpp"
#include "../ir/gone.hpp"
#include "../ir/node.hpp"
