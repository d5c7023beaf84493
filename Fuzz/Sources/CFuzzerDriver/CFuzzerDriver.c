// Nothing to compile: the target exists for its header (SwiftPM wants a source).
#include "CFuzzerDriver.h"
