import { rotateSigningKey } from '../identity/signing-keys.js';
import { describe, type Commands } from './command.js';

export const keysCommands: Commands = {
  rotate: {
    usage: 'keys rotate',
    options: {},
    async run({ db, config, keyEncryption }) {
      const rotation = await rotateSigningKey(db, keyEncryption(), config.tokenTtlSeconds);
      const json = {
        kid: rotation.kid,
        retired: rotation.retired.map((key) => ({ kid: key.kid, verify_until: key.verifyUntil.toISOString() })),
      };
      const retired = rotation.retired.map((key) => `${key.kid} (verifies until ${key.verifyUntil.toISOString()})`);
      return {
        json,
        text: `New signing key, used from now on.\n${describe({ kid: rotation.kid, retired: retired.length ? retired : 'none' })}`,
      };
    },
  },
};
