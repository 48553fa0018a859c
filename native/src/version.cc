#include "sluice/sluice.h"

extern "C" const char* sluice_version(void) { return SLUICE_VERSION_STRING; }
