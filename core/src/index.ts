import 'reflect-metadata';

export * from './config/types';
export { loadConfig, ConfigError } from './config/load-config';
export type { LoadConfigOptions } from './config/load-config';
export { SERVICES } from './container/service-keys';
export type { Clock } from './clock';
export { systemClock } from './clock';
export { foldText } from './fold-text';
export { loadOnFirstUse } from './load-on-first-use';
export { withinDeadline } from './deadline';
export { RedisAwayError, isRedisAway } from './redis-away';
export type { Logger } from './logger';
export { createKnex, dialectOf } from './db/knex';
export { byPrimaryKey, dialectOfKnex, lockedOnMysql } from './db/dialect';
export type { Dialect } from './db/knex';
export * from './db/values';
export { rowMapper } from './db/row-mapper';
export type { RowMapper } from './db/row-mapper';
export { isDatabaseNotServing, isForeignKeyViolation, isUniqueViolation, NOT_MIGRATED } from './db/errors';
export { paginate } from './db/paginate';
export { whereContains } from './db/like';
export { insertRows, insertRowsReturningIds, insertValues } from './db/insert-rows';
export type { InsertRowsOptions, InsertedStatement, RowValues } from './db/insert-rows';
export { onDriverConnection } from './db/driver-connection';
export type { DriverConnection, MysqlWriteResult } from './db/driver-connection';
export { placeholders, rowPlaceholders, selectText, writeText } from './db/statement-text';
export { addOnConflict } from './db/add-on-conflict';
export { addByKey, setWhereIn, updateText } from './db/update-text';
export type { SqlPiece } from './db/update-text';
export { ownedRow, deleteOwnedRow } from './db/owned-rows';
export { transactionWithRetry, isRetryableConflict, WriteConflict } from './db/retry-transaction';
export { GroupCommit } from './db/group-commit';
export type { GroupCommitOptions } from './db/group-commit';
export { schemaFingerprint, checkSchemaSnapshot, listTables } from './db/schema-fingerprint';
export { withoutSqliteForeignKeys } from './db/sqlite-table-copies';
export {
  Migrator,
  loadMigrationFiles,
  alterTableOnce,
  createTableOnce,
  dropColumnsOnce,
  hasIndex,
  SchemaGate,
} from './db/migrations';
export type { MigrationContext, MigrationNamespace, NamespaceStatus } from './db/migrations';
export * from './http/errors';
export * from './http/envelope';
export * from './http/linked-envelopes';
export { objectRoutes } from './http/object-routes';
export type { ObjectRoutes } from './http/object-routes';
export * from './http/api-registry';
export { CHECKED_ALONE, compileValidator } from './http/validation';
export { readRawBody } from './http/raw-body';
export { SecretBox } from './secrets/secret-box';
export { localSecret } from './secrets/local-secret';
export type { LocalSecret, LocalSecretSpec } from './secrets/local-secret';
export { OUTBOUND_ADDRESS_REFUSED, OutboundGuard } from './http/outbound-guard';
export { guardedConnector, guardedLookup, ipLiteralOf } from './http/address-guard';
export type { AddressRefusal } from './http/address-guard';
export {
  addressInRanges,
  allowedRangesOf,
  LOOPBACK_RANGES,
  METADATA_RANGES,
  NON_PUBLIC_RANGES,
} from './http/outbound-ranges';
export type { Ranges } from './http/outbound-ranges';
export type { Mailer, MailMessage, MailerOptions, SentMail } from './mail/mailer';
export {
  isHandoverUnavailable,
  isPermanentMailError,
  isRecipientRefused,
  isRelayLoginRefused,
  nodemailerMail,
  relayIdOf,
} from './mail/mailer';
export { addressAtHost } from './mail/address-at-host';
export * from './plugin/types';
export { defineService, provide } from './plugin/services';
export { loadPlugins, hostResolver, PluginLoadError } from './plugin/loader';
export type { LoadedPlugin } from './plugin/loader';
export type { AuthContext } from './auth/api-tokens';
export { ApiTokenService, hashToken } from './auth/api-tokens';
export { OrganizationService } from './auth/organizations';
export type { Organization, Plan } from './auth/organizations';
export { grants, knownResources } from './auth/permissions';
export * from './queue/types';
export { queueEachSoon, queueSoon } from './queue/queue-soon';
export type { Locks, LockHandle } from './locks/types';
export { Engine } from './engine/engine';
export type { EngineOptions } from './engine/engine';
export { buildProgram, runCli } from './cli/program';
export { CliError, idOf, oneLine, printResult } from './cli/output';
export * from './schemas/common';
export { RepeatedWarning } from './repeated-warning';
export { whileDatabaseAway } from './db/while-database-away';
