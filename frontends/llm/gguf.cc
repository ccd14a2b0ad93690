#include "frontends/llm/gguf.h"
