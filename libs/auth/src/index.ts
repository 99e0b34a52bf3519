export * from './principal';
export * from './credentials';
export * from './key-hashing';
export * from './ip-allow-list';
export * from './client-ip';
export * from './auth.decorators';
export { ApiKeyGuard } from './api-key.guard';
export { AuthModule } from './auth.module';
export type { AuthModuleOptions } from './auth.module';
