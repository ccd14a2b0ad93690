#include <gtest/gtest.h>

#include "tests/tensor/reference.h"
