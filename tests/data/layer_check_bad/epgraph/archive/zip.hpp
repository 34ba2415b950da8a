#pragma once
#include <zip.h>

#include "../json/reader.hpp"
