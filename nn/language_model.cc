#include "nn/language_model.h"
