#include "frontends/llm/tokenizer.h"
