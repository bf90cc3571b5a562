export { currentLogFields, enterLogContext, type LogFields, withLogContext } from './log-context.ts';
export {
  followLog,
  LOG_LEVELS,
  type LogEntry,
  type LogLevelName,
  logTail,
  parseLogLine,
} from './log-tail.ts';
export {
  createLogger,
  type Logger,
  type LoggerOptions,
  redact,
  redactString,
  silentLogger,
} from './logger.ts';
export { logFilePath, RotatingFile, type RotatingFileOptions } from './rotating-file.ts';
