// SPDX-License-Identifier: MIT
// The aggregate `core` library: it links every area library (see CMakeLists.txt) and holds no code itself.
#include "version.h"
