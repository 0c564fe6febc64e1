# aoe.mk - Makefile recipes to tune a project's models with aoe.
#
# Include it and list the models with their input shapes (AOE_DIR, if you
# change it, must be set before the include):
#
#	include /usr/local/share/aoe/aoe.mk
#	AOE_MODELS = det.onnx rec.onnx
#	AOE_SHAPE_det = x:1,3,640,640
#	AOE_SHAPE_rec = x:1,3,48,320
#	tune: aoe-tune
#
# `make tune` captures each model's static graph, and tunes (operator
# tuning, job type 2, unless AOE_JOB_TYPE says 1) only the models whose
# captured graph changed since their last tuning: a capture that produces
# the same graph leaves the old file, and its timestamp, in place.

AOE_JOB_TYPE ?= 2
AOE_DIR ?= aoe_work
AOE_CAPTURE ?= aoe-capture
AOE_OPAT ?= aoe-opat
AOE_SGAT ?= aoe-sgat
AOE_REPORT ?= aoe-report
AOE_TUNE_FLAGS ?=

aoe_tuner = $(if $(filter 1,$(AOE_JOB_TYPE)),$(AOE_SGAT),$(AOE_OPAT))
aoe_shape = $(if $(AOE_SHAPE_$(1)),--input-shape '$(AOE_SHAPE_$(1))')

# Capture into a temporary file; replace the graph only if it differs.
$(AOE_DIR)/%.graph.json: %.onnx FORCE
	@mkdir -p $(@D)
	$(AOE_CAPTURE) $(call aoe_shape,$*) -o $@.new $<
	@if cmp -s $@.new $@; then rm -f $@.new; \
	 else mv -f $@.new $@; echo "aoe.mk: $* changed, will tune"; fi

# Tune, commit to the bank and report, when the graph is newer.
$(AOE_DIR)/%.tuned: $(AOE_DIR)/%.graph.json
	$(aoe_tuner) --commit $(AOE_TUNE_FLAGS) -o $(AOE_DIR)/$*.records.jsonl $<
	$(AOE_REPORT) -q -o $(AOE_DIR) --tuning-name $* $(AOE_DIR)/$*.records.jsonl
	@touch $@

# Second expansion, so that AOE_MODELS may be set after the include.
.SECONDEXPANSION:
aoe-tune: $$(patsubst %.onnx,$$(AOE_DIR)/%.tuned,$$(AOE_MODELS))

aoe-clean:
	rm -rf $(AOE_DIR)

FORCE:
.PHONY: aoe-tune aoe-clean FORCE
.PRECIOUS: $(AOE_DIR)/%.graph.json
