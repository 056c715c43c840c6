import { startupSnapshot } from 'node:v8';
import { parseCommand, USAGE } from './args';
import { runGet } from './get';

async function main(argv: string[]): Promise<number> {
  let command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    console.error(`stitch: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (command === 'help') {
    console.log(USAGE);
    return 0;
  }
  return runGet(command);
}

function run(argv: string[]): void {
  main(argv).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`stitch: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(70);
    },
  );
}

// Built into a start-up snapshot (bin/stitch), this module has run already when the command starts, and
// `process.argv` holds no script path.
if (startupSnapshot.isBuildingSnapshot()) startupSnapshot.setDeserializeMainFunction(() => run(process.argv.slice(1)));
else run(process.argv.slice(2));
