/** The operators' commands' usage, apart from the commands themselves: `hermod` prints it without loading them. */
export const CAMPAIGNS_USAGE = `  campaigns list [<application>]             campaigns with their state and progress (all applications without one)
  campaigns show <application> <campaign-id>  one campaign as JSON: state, members, submitted, delivered, failed,
                                             blocked, deficient, dead, remaining, current rate, estimate of the time left
  campaigns pause <application> <campaign-id>   stop new sends within a second, on every core
  campaigns resume <application> <campaign-id>  continue where it stopped (nobody twice, nobody skipped)
  campaigns cancel <application> <campaign-id>  members not yet handed to a carrier are never sent: they end dead
  campaigns dry-run <application> <list-id> (--content <text> | --template <name>)
                                             send nothing: members after opt-outs and checks, segments per member
                                             and in total, dropped members and why, members sent with a warning
                                             (a {{paramN}} they lack is sent as nothing), estimated duration`;

export const ADMIN_USAGE = `operators' commands (they talk to core at HERMOD_CORE_ADDRESS):
  apps list                                  list applications
  apps create <name> [--password <pw>]       create an application (prints a new API key with --api-key)
              [--api-key]
  apps set-password <name> <password>        set or change an application's password
  apps set-callbacks <name> [--status <url>]  set (or, with '', remove) the v2 status and reply callback URLs
              [--reply <url>] [--im-status <url>]  and the Intelligent Messaging status callback URL;
              [--rotate-secret]                  prints the secret that signs the callbacks; --rotate-secret makes a new
              [--keep-old-secret <duration>]     one, and --keep-old-secret 24h (at most 7d) lets the old one sign
                                                 beside it that long (a second v1) while receivers move to the new
  apps set-im-attempts <name> <attempts>     default Intelligent Messaging attempts, e.g. wab:read:60,sms ('' : service default)
  apps set-sources <name> [<address>...]     numbers, short codes and masks the application sends from: replies
                                             to them are its own (none given: release all its claims)
  apps set-im-rate-limit <name> <per-second>  Intelligent Messaging requests per second, 0..100 (0: no limit;
                                             'default': HERMOD_IM_RATE_LIMIT), shared by every gateway
  apps set-quota <name> --messages <n>       messages the application may send per calendar hour, day or month
              --per hour|day|month           (UTC), counted across every core; over it v2 sends end
              | --clear                      deficient and v1 sends are refused (--clear: no quota)
  blocklist add [--app <name>] <prefix>...   block E.164 numbers or prefixes (+6421) for one application, or
                                             for all without --app: matching sends end blocked
  blocklist remove [--app <name>] <prefix>...  remove entries from that list (none if one is not on it)
  blocklist list [--app <name>]              the entries of one application's list, or of every list
  keys issue <name>                          issue a new API key (replaces the current one; printed once)
  keys revoke <name>                         revoke the application's API key
  messages route <name> <id>                 the route rule and carrier an SMS of the application was submitted to
                                             (<id>: its UUID, or its Gateway v1 or campaign report number)
  optouts list [<name>]                      handsets that replied STOP, of one application or all
  templates list <name>                      the application's Campaign Manager templates
  templates set <name> <template> <content>  create a template, or change its content (placeholders
                                             {{param1}}..{{param6}} and {{destination}})
  im-templates list <name>                   the application's Intelligent Messaging templates
  im-templates set <name> <uuid> <template-name> <language> <body>
                                             create or change one (body placeholders: {{parameter}})
  contacts list <name>                       the application's contacts
  contacts set <name> <uuid> [--mobile <e164>] [--email <address>] [--whatsapp <id>]
${CAMPAIGNS_USAGE}`;
