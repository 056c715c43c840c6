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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`stitch: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(70);
  },
);
