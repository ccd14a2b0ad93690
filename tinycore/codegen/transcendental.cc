// (being written)
#include "tinycore/codegen/transcendental.h"
