import cluster from 'node:cluster';
import { ConfigError, resolveConfig } from '../lib/config';
import { ensureDataDir } from '../lib/data-dir';
import { recordingEnv, unknownHermodVariables } from '../lib/unknown-variables';
import { createLogger, setLogLevel } from '../lib/log';
import type { Role } from '../lib/role';
import { runRole } from './run-role';
import { runSupervisor } from '../lib/supervisor';
import { ADMIN_USAGE } from './cli/admin-usage';
import { STATUS_USAGE } from './cli/status-usage';
import { asksForHelp, commandHelp } from './cli/command-help';
import { roleUsageProblem } from './cli/role-usage-problem';
import { outputLines } from './cli/output-lines';
import { keepBuildInUse } from '../lib/build-location';

const USAGE = `usage: hermod <command>

commands:
  start            run the whole service on this machine (gateways, core, SMS workers, SMSC simulator)
  gateway          run one gateway process (HTTPS edge)
  core             run the core process (gRPC, intake, status, history; with HERMOD_BUS=memory also the SMS workers)
  worker --channel <name>[,<name>...]
                   run one worker of each named channel's pool (needs HERMOD_BUS=redis or kafka); channels: sms, email, wab, rcs, mms
  smsc-simulator   run the SMSC simulator (an SMPP server), or one per simulated carrier of HERMOD_CARRIERS_FILE
  channel-simulators
                   run the SMTP sink and the WhatsApp, RCS and MMS simulators
  console          run the operator console (HERMOD_ADMIN_*; needs HERMOD_ADMIN_PASSWORD)
  reply <from> <to> <text> [--carrier <name>]
                   a handset's reply through the SMSC simulator (HERMOD_SMSC_HOST, HERMOD_SMSC_PORT), or a simulated
                   carrier of HERMOD_CARRIERS_FILE (the first, or the one named), e.g.
                   hermod reply +6421999001 4000 STOP
  reply --whatsapp <from> <text>
                   a handset's WhatsApp message to the business number, posted by the WhatsApp simulator
                   (HERMOD_WAB_URL, or HERMOD_WAB_SIMULATOR_PORT under npm start)
${STATUS_USAGE}
  grpc-certs <dir> <host>...
                   make a CA and a certificate for the roles' mutual TLS (HERMOD_GRPC_TLS_*),
                   valid for the hosts core is reached at

${ADMIN_USAGE}

Configuration is read from HERMOD_* environment variables; see README.md.`;

const log = createLogger();

/** The commands above that are hermod's own, not the operators' (those are in ADMIN_USAGE). */
const ROLE_COMMANDS = new Set(['start', 'gateway', 'core', 'worker', 'smsc-simulator', 'channel-simulators', 'console', 'reply', 'grpc-certs', 'status']);

/** The commands that run (part of) the service, whose output is a log. */
const ROLE_SERVICES = new Set(['start', 'gateway', 'core', 'worker', 'smsc-simulator', 'channel-simulators', 'console']);

function flag(name: string): string | undefined {
  const args = process.argv.slice(3);
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  return args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

async function main(): Promise<void> {
  const command = cluster.isWorker ? process.env.HERMOD_ROLE : process.argv[2];
  if (!cluster.isWorker && command && asksForHelp(process.argv.slice(3))) {
    const help = commandHelp(USAGE, command);
    // A command the usage does not describe is refused below as unknown, help or not (it printed the whole usage, exit 0).
    if (help !== USAGE || ['help', '--help', '-h'].includes(command)) {
      outputLines(process.stdout)(help);
      return;
    }
  }
  // A role's command line checked before anything starts (the operators' commands check their own); a cluster worker's is the supervisor's.
  const problem = !cluster.isWorker && command && ROLE_COMMANDS.has(command) ? roleUsageProblem(command, process.argv.slice(3)) : undefined;
  if (problem) {
    process.stderr.write(`error: ${problem}\n`);
    process.exit(2);
  }
  keepBuildInUse();
  let config: ReturnType<typeof resolveConfig>;
  const recorded = recordingEnv(process.env);
  try {
    config = resolveConfig(recorded.env);
    setLogLevel(config.logLevel);
  } catch (err) {
    if (err instanceof ConfigError) {
      // A service process logs it as a log line; an operator's command says it as its other errors: one plain line.
      if (command && !ROLE_SERVICES.has(command)) process.stderr.write(`error: configuration error: ${err.message}\n`);
      else log.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  // Said once, by the process an operator started (not again by each process `start` runs).
  const warnUnknownVariables = (): void => {
    if (cluster.isWorker) return;
    for (const v of unknownHermodVariables(process.env, recorded.read))
      log.warn('an environment variable is no setting of hermod: ignored', { variable: v.name, ...(v.didYouMean ? { didYouMean: v.didYouMean } : {}) });
  };
  switch (command) {
    case 'start':
      warnUnknownVariables();
      ensureDataDir(config.dataDir);
      await runSupervisor(config, log);
      return;
    case 'gateway':
    case 'core':
    case 'worker':
    case 'smsc-simulator':
    case 'channel-simulators':
    case 'console': {
      warnUnknownVariables();
      ensureDataDir(config.dataDir);
      // Run alone, a worker's --channel is there (roleUsageProblem said so); under the supervisor, HERMOD_CHANNEL.
      const channel = command === 'worker' ? (cluster.isWorker ? process.env.HERMOD_CHANNEL : flag('--channel')) : undefined;
      await runRole(command as Role, config, log.child({ role: command, pid: process.pid, ...(channel ? { channel } : {}) }), { channel });
      return;
    }
    case 'apps':
    case 'keys':
    case 'optouts':
    case 'templates':
    case 'im-templates':
    case 'contacts':
    case 'blocklist':
    case 'messages':
    case 'campaigns':
      // The operators' commands and the certificate maker load only when asked for: every process of the service starts here.
      process.exitCode = await (await import('./cli/admin-cli')).runAdminCommand(
        config,
        process.argv.slice(2),
        outputLines(process.stdout),
        outputLines(process.stderr),
      );
      return;
    case 'reply':
      process.exitCode = await (await import('./cli/reply-cli')).runReplyCommand(
        config,
        process.argv.slice(3),
        outputLines(process.stdout),
        outputLines(process.stderr),
      );
      return;
    case 'status':
      process.exitCode = await (await import('./cli/status-cli')).runStatusCommand(config, outputLines(process.stdout), outputLines(process.stderr));
      return;
    case 'grpc-certs': {
      const [dir, ...hosts] = process.argv.slice(3);
      if (!dir || hosts.length === 0) {
        process.stderr.write('usage: hermod grpc-certs <dir> <host>...\n');
        process.exit(2);
      }
      const made = await (await import('../lib/role-certificates')).makeRoleCertificates(dir, 'hermod', hosts).catch((err: unknown) => err as Error);
      if (made instanceof Error) {
        // A directory that cannot hold them, or half a CA: one line, as the operators' commands say what went wrong.
        process.stderr.write(`error: ${made.message}\n`);
        process.exit(1);
      }
      const files = made;
      outputLines(process.stdout)(`HERMOD_GRPC_TLS_CERT=${files.certFile}\nHERMOD_GRPC_TLS_KEY=${files.keyFile}\nHERMOD_GRPC_TLS_CA=${files.caFile}`);
      return;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      outputLines(process.stdout)(USAGE);
      return;
    default:
      process.stderr.write(`error: unknown command ${JSON.stringify(command)} (hermod --help lists them)\n`);
      process.exit(2);
  }
}

main().catch((err) => {
  // A setting that cannot work, found only as a role starts: one line naming it, as when the configuration is read.
  if (err instanceof ConfigError) {
    log.error(`configuration error: ${err.message}`);
    process.exit(2);
  }
  log.error('hermod failed to start', { err, stack: (err as Error).stack });
  process.exit(1);
});
