#include "frontends/llm/quant.h"
