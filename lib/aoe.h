/*
 * aoe.h - libaoe's public header: every layer's, bottom up (see the
 * Layout section of README.md; make check-layers keeps the order true).
 * Every public name starts with aoe_ or AOE_.
 */
#ifndef AOE_H
#define AOE_H

#include "aoe_base.h"
#include "aoe_ir.h"
#include "aoe_kernels.h"
#include "aoe_runtime.h"
#include "aoe_bank.h"
#include "aoe_engine.h"
#include "aoe_tune.h"
#include "aoe_session.h"

#endif
