/** `hermod status`'s line of the usage: `hermod` prints it without loading the command. */
export const STATUS_USAGE = `  status           what an operator looks at first (from core at HERMOD_CORE_ADDRESS): the backlog of each topic's
                   consumer group, every carrier bind (up, window, submits a second, last error) and each
                   application's callbacks (owed, delivered, failed)`;
