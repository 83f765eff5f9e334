import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import type { DoctorFlags } from '../doctor/command.js';

type Runner = <A extends unknown[]>(
  load: (ctx: CliContext, ...args: A) => Promise<unknown>,
) => (...args: unknown[]) => Promise<void>;

/** `qmd doctor [--json] [--probe]` (src/cli/doctor/): what is set up, what runs, and what should not be. */
export function defineDoctor(program: Command, run: Runner): void {
  program
    .command('doctor')
    .description(
      'check the runtime, SQLite, the index, the models, and every qmd process of this user; exit 1 when something is wrong, with the command that fixes it',
    )
    .option('--json', 'as JSON')
    .option('--probe', 'also load llama.cpp to see which device it gets (a few seconds)')
    .action(
      run(async (ctx, opts: DoctorFlags) => {
        const { doctor } = await import('../doctor/command.js');
        await doctor(ctx, opts);
      }),
    );
}
