#include "frontends/llm/checkpoint.h"
