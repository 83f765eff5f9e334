/**
 * Which llama.cpp backend qmd ends up on (`src/llm/llama.ts`), for each `--gpu` choice and
 * each way a GPU backend can fail, with node-llama-cpp's loader replaced by a fake that
 * records what it was asked (no binary is loaded here; the spawned tests run the real one:
 * test/e2e/gpu.test.ts). Each test wraps its own `getLlama`, so each gets its own instance.
 */
import type { Llama } from 'node-llama-cpp';
import { describe, expect, it } from 'vitest';
import { acquireLlama, type LlamaLoader } from '../../src/llm/llama.js';
import { recordingLog } from '../support/recording-log.js';

type Gpu = false | 'cuda' | 'vulkan' | 'metal';

/** A loader whose `getLlama` answers per backend: a Llama on `devices`, or the error to throw. */
function fakeLoader(detected: Gpu[], outcomes: Partial<Record<string, string[] | Error>>) {
  const asked: Array<Record<string, unknown>> = [];
  const disposed: string[] = [];
  const loader: LlamaLoader = {
    getLlama: (async (options: Record<string, unknown>) => {
      asked.push(options);
      const gpu = options.gpu as Gpu;
      const outcome = outcomes[String(gpu)] ?? (gpu === false ? [] : new Error('NoBinaryFoundError'));
      if (outcome instanceof Error) throw outcome;
      return {
        gpu,
        getGpuDeviceNames: async () => outcome,
        dispose: async () => {
          disposed.push(String(gpu));
        },
      } as unknown as Llama;
    }) as unknown as LlamaLoader['getLlama'],
    getLlamaGpuTypes: (async () => detected) as unknown as LlamaLoader['getLlamaGpuTypes'],
  };
  return { loader, asked, disposed };
}

async function backendOf(gpu: 'auto' | 'off' | 'metal' | 'cuda' | 'vulkan', fake: ReturnType<typeof fakeLoader>) {
  const log = recordingLog();
  const lease = acquireLlama(fake.loader, { maxThreads: 1, gpu, log });
  const llama = await lease.llama;
  const backend = lease.backend();
  await lease.release();
  return { llama, backend, lines: log.lines, warnings: log.warnings };
}

describe('the llama.cpp backend', () => {
  it('off: the CPU build, without looking for a GPU, and nothing said', async () => {
    const fake = fakeLoader(['cuda', false], { cuda: ['NVIDIA H200'] });
    const { backend, lines, warnings } = await backendOf('off', fake);
    expect(fake.asked.map((o) => o.gpu)).toEqual([false]);
    expect(backend).toEqual({ requested: 'off', gpu: 'cpu', devices: [] });
    expect([...lines, ...warnings]).toEqual([]);
  });

  it('auto with no GPU driver on the machine: the CPU, with one line saying so and how to skip looking', async () => {
    const fake = fakeLoader([false], {});
    const { backend, lines, warnings } = await backendOf('auto', fake);
    expect(fake.asked.map((o) => o.gpu)).toEqual([false]);
    expect(backend).toMatchObject({ requested: 'auto', gpu: 'cpu', devices: [] });
    expect(lines).toEqual([
      'QMD: no GPU found (no Metal, CUDA or Vulkan driver detected): llama.cpp runs on the CPU. --gpu off (or QMD_GPU=off) skips looking.',
    ]);
    expect(warnings).toEqual([]);
  });

  it('auto tries each detected GPU in order: CUDA fails to load, Vulkan loads, nothing is said', async () => {
    const fake = fakeLoader(['cuda', 'vulkan', false], { vulkan: ['NVIDIA H200'] });
    const { backend, lines, warnings } = await backendOf('auto', fake);
    expect(fake.asked.map((o) => o.gpu)).toEqual(['cuda', 'vulkan']);
    expect(backend).toEqual({ requested: 'auto', gpu: 'vulkan', devices: ['NVIDIA H200'] });
    expect([...lines, ...warnings]).toEqual([]);
  });

  it('auto whose detected GPUs all fail: the CPU, one warning naming each failure and how to turn it off', async () => {
    const fake = fakeLoader(['cuda', 'vulkan', false], {
      vulkan: new Error('vk::createInstance: ErrorIncompatibleDriver'),
    });
    const { backend, warnings } = await backendOf('auto', fake);
    expect(fake.asked.map((o) => o.gpu)).toEqual(['cuda', 'vulkan', false]);
    expect(backend).toMatchObject({ gpu: 'cpu', devices: [] });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toBe(
      'GPU backend did not load (cuda: no prebuilt llama.cpp for cuda loads here (is the NVIDIA driver with its CUDA ' +
        'libraries installed?); vulkan: vk::createInstance: ErrorIncompatibleDriver): llama.cpp runs on the CPU. ' +
        '--gpu off (or QMD_GPU=off) runs on the CPU without trying.',
    );
  });

  it('a named backend that does not load: the CPU, with one warning', async () => {
    const fake = fakeLoader([false], {});
    const { backend, warnings } = await backendOf('vulkan', fake);
    expect(fake.asked.map((o) => o.gpu)).toEqual(['vulkan', false]);
    expect(backend?.gpu).toBe('cpu');
    expect(warnings).toEqual([
      'GPU backend did not load (vulkan: no prebuilt llama.cpp for vulkan loads here (is a Vulkan loader ' +
        '(libvulkan.so.1) and a GPU driver installed?)): llama.cpp runs on the CPU. --gpu off (or QMD_GPU=off) runs ' +
        'on the CPU without trying.',
    ]);
  });

  it('a backend that loads but drives no device is kept (no second Llama), and said to run on the CPU', async () => {
    const fake = fakeLoader([false], { vulkan: [] });
    const { backend, warnings } = await backendOf('vulkan', fake);
    expect(fake.asked.map((o) => o.gpu)).toEqual(['vulkan']);
    expect(backend).toMatchObject({ gpu: 'vulkan', devices: [] });
    expect(warnings).toEqual([
      'the vulkan backend loaded but found no GPU device; llama.cpp runs on the CPU. --gpu off (or QMD_GPU=off) ' +
        'runs on the CPU without looking.',
    ]);
  });

  it.runIf(process.platform !== 'darwin')('metal off macOS: not tried, the CPU with a warning', async () => {
    const fake = fakeLoader([false], { metal: ['Apple M3'] });
    const { backend, warnings } = await backendOf('metal', fake);
    expect(fake.asked.map((o) => o.gpu)).toEqual([false]);
    expect(backend?.gpu).toBe('cpu');
    expect(warnings[0]).toContain('metal: Metal exists only on macOS');
  });

  it('never builds or downloads llama.cpp, and logs through qmd, never the console', async () => {
    const fake = fakeLoader(['cuda', 'vulkan', false], {});
    await backendOf('auto', fake);
    for (const options of fake.asked) {
      expect(options).toMatchObject({ build: 'never', skipDownload: true, progressLogs: false, debug: false });
      expect(typeof options.logger).toBe('function');
    }
  });

  it('one Llama per process: a second holder shares the first, whose choice stands; the last one disposes it', async () => {
    const fake = fakeLoader(['vulkan', false], { vulkan: ['NVIDIA H200'] });
    const log = recordingLog();
    const first = acquireLlama(fake.loader, { maxThreads: 1, gpu: 'auto', log });
    const second = acquireLlama(fake.loader, { maxThreads: 4, gpu: 'off', log });
    expect(await second.llama).toBe(await first.llama);
    expect(second.backend()?.gpu).toBe('vulkan');
    await first.release();
    expect(fake.disposed).toEqual([]);
    await second.release();
    expect(fake.disposed).toEqual(['vulkan']);
    expect(fake.asked).toHaveLength(1);
  });
});
