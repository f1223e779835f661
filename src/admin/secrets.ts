import { sealSecrets } from '../identity/secrets-at-rest.js';
import { describe, type Commands } from './command.js';

export const secretsCommands: Commands = {
  rewrap: {
    usage: 'secrets rewrap',
    options: {},
    async run({ db, keyEncryption }) {
      const keys = keyEncryption();
      const report = await sealSecrets(db, keys, { rewrap: true });
      const json = {
        kek_id: keys.current.id,
        secrets: report.total,
        rewrapped: report.rewrapped,
        sealed_from_plaintext: report.sealed,
      };
      const text = [
        `Every stored secret (${report.total}) is sealed under key-encryption key ${keys.current.id}; SECRETS_KEY_PREVIOUS is no longer needed to open them.`,
        describe({ 'kek id': keys.current.id, rewrapped: report.rewrapped, 'sealed from plaintext': report.sealed }),
      ].join('\n');
      return { json, text };
    },
  },
};
