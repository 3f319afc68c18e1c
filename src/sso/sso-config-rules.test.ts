// The configuration's pure checks (sso-config.ts), with fast-check: whatever an Owner types, the
// answer is a normalised value or a 400 naming the field, never another error.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AppError } from '../errors/app-error.js';
import { checkDomain, checkIssuer, checkSsoConfig, domainOf } from './sso-config.js';

const roles = ['Owner', 'Admin', 'Developer', 'Viewer'];

/** The value, or the field a 400 named; anything else thrown fails the property. */
function outcome<T>(run: () => T): { value: T } | { field: unknown } {
  try {
    return { value: run() };
  } catch (error) {
    assert.ok(error instanceof AppError && error.code === 'bad_request', `unexpected ${String(error)}`);
    return { field: error.extra.field };
  }
}

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
const domain = fc.tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.stringMatching(/^[a-z]{2,6}$/)).map(([labels, tld]) => [...labels, tld].join('.'));

describe('single sign-on configuration rules', () => {
  test('any text as a domain: lower-case and stable when accepted, else a 400 naming email_domains', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        const result = outcome(() => checkDomain(text));
        if ('field' in result) return assert.equal(result.field, 'email_domains');
        assert.equal(result.value, result.value.toLowerCase());
        assert.equal(checkDomain(result.value), result.value, 'idempotent');
      }),
    );
  });

  test('well-formed domains in any case are accepted, lower-cased; domainOf finds them after the last @', () => {
    fc.assert(
      fc.property(domain, fc.stringMatching(/^[a-zA-Z0-9._+@-]{1,20}$/), fc.boolean(), (d, local, upper) => {
        const written = upper ? d.toUpperCase() : d;
        assert.equal(checkDomain(written), d);
        assert.equal(domainOf(`${local}@${written}`), d);
      }),
    );
  });

  test('any text as an issuer: https (or http on loopback) without query or fragment, else a 400 naming issuer', () => {
    fc.assert(
      fc.property(fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string({ maxLength: 60 })), (text) => {
        const result = outcome(() => checkIssuer(text));
        if ('field' in result) return assert.equal(result.field, 'issuer');
        const url = new URL(result.value);
        assert.ok(url.protocol === 'https:' || ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname), result.value);
        assert.equal(url.search + url.hash, '');
      }),
    );
  });

  test('default_role: any role of the organisation but Owner', () => {
    const base = { issuer: 'https://idp.example', client_id: 'c', client_secret: 's', email_domains: ['studio.example'] };
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...roles), fc.string({ maxLength: 20 })), (role) => {
        const result = outcome(() => checkSsoConfig({ ...base, default_role: role }, roles));
        if (role !== 'Owner' && roles.includes(role)) assert.ok('value' in result && result.value.default_role === role);
        else assert.deepEqual(result, { field: 'default_role' });
      }),
    );
  });

  test('email_domains: duplicates in any case collapse; 21 domains → 400', () => {
    const base = { issuer: 'https://idp.example', client_id: 'c', client_secret: 's', default_role: 'Viewer' };
    assert.deepEqual(checkSsoConfig({ ...base, email_domains: ['A.example', 'a.example', '@b.example'] }, roles).email_domains, ['a.example', 'b.example']);
    const many = Array.from({ length: 21 }, (_, i) => `d${i}.example`);
    assert.deepEqual(outcome(() => checkSsoConfig({ ...base, email_domains: many }, roles)), { field: 'email_domains' });
  });
});
