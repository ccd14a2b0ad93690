#include "frontends/llm/pretokenize.h"
