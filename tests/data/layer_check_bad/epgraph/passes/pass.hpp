#pragma once
#include "../program/detail/x.hpp"
