import { randomBytes } from 'node:crypto';
import { KeyEncryption, keyEncryptionKey } from '../../src/identity/key-encryption.js';

/**
 * This test process's key-encryption key, random like its database. Servers and admin runs that a test starts on
 * that database get it as SECRETS_KEY.
 */
export const TEST_SECRETS_KEY = randomBytes(32).toString('base64');

export const testKeyEncryption = new KeyEncryption(
  keyEncryptionKey(Buffer.from(TEST_SECRETS_KEY, 'base64'), 'SECRETS_KEY'),
);
