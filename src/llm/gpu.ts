/**
 * Which llama.cpp backend qmd asks node-llama-cpp for (`--gpu`, `QMD_GPU`): `auto` (the
 * default) tries the GPU backends node-llama-cpp detects on this machine (Metal on Apple
 * Silicon, CUDA and Vulkan elsewhere) and falls back to the CPU; `off` is the CPU without
 * looking; a named backend is that one or, when it does not load, the CPU with a warning.
 * Nothing is ever built or downloaded at run time (`build: 'never'`, `skipDownload`).
 */
export const GPU_CHOICES = ['auto', 'off', 'metal', 'cuda', 'vulkan'] as const;

export type GpuChoice = (typeof GPU_CHOICES)[number];

/** A named GPU backend, as node-llama-cpp names it (`Llama.gpu`). */
export type GpuBackend = 'metal' | 'cuda' | 'vulkan';

/** `text` as a choice (case and surrounding blanks ignored), or undefined. */
export function parseGpuChoice(text: string): GpuChoice | undefined {
  const value = text.trim().toLowerCase();
  return (GPU_CHOICES as readonly string[]).includes(value) ? (value as GpuChoice) : undefined;
}

/** How a user turns the GPU off, said the same way in every message. */
export const GPU_OFF_HINT = '--gpu off (or QMD_GPU=off)';
