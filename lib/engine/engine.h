/*
 * engine.h - graph preparation's internals, for libaoe's own files.
 * Not installed.
 */
#ifndef AOE_ENGINE_INT_H
#define AOE_ENGINE_INT_H

#include "aoe_engine.h"
#include "bank.h"

/*
 * Called by aoe_graph_prepare() when AOE_MODE is set: writes the graph
 * to $AOE_CAPTURE_DIR, or tunes it inline with aoe-opat or aoe-sgat
 * (see aoe-capture(1)).  Refuses AOE_MODE=4.
 */
int aoe_capture_hook(aoe_graph *g);

#endif
