"""int_gemm at its source before the 64-bit row offsets (an A/B build, not a product stage)."""
import dataclasses

from plugins import int_gemm as base

STAGE = dataclasses.replace(base.STAGE, name="int_gemm_prev")
