#include "frontends/llm/chat_template.h"
