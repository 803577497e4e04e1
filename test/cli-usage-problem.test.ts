import { describe, expect, it } from 'vitest';
import { usageProblem } from '../bin/cli/usage-problem';

describe("what is wrong with an operators' command line", () => {
  it('names a command it does not know, and where the known ones are listed', () => {
    expect(usageProblem(['apps', 'frob'])).toBe('unknown command "apps frob" (hermod apps --help lists them)');
    expect(usageProblem(['campaigns', 'tīmata', 'acme', '42'])).toBe('unknown command "campaigns tīmata" (hermod campaigns --help lists them)');
    expect(usageProblem(['blocklist', ''])).toBe('unknown command "blocklist " (hermod blocklist --help lists them)');
    expect(usageProblem(['keys'])).toBe('"keys" needs a command (hermod keys --help lists them)');
  });

  it('says an application name given empty is empty, wherever a command takes one', () => {
    for (const args of [
      ['apps', 'create', '', '--password', 'x'],
      ['apps', 'set-password', '', 'kupuhipa'],
      ['templates', 'set', '', 'welcome', 'Kia ora {{param1}}'],
      ['optouts', 'list', ''],
      ['campaigns', 'list', ''],
      ['campaigns', 'show', '', '42'],
      ['blocklist', 'add', '--app', '', '+6421'],
      ['blocklist', 'list', '--app', ''],
    ]) {
      expect(usageProblem(args), args.join(' ')).toBe('application name is empty');
    }
    expect(usageProblem(['blocklist', 'remove', '+6421', '--app'])).toBe('--app needs an application name');
  });

  it('says an application name is missing where an option stands in its place', () => {
    expect(usageProblem(['apps', 'create', '--password', 'x'])).toBe('application name missing before --password');
    expect(usageProblem(['apps', 'set-callbacks', '--status', 'https://hooks.example.com/tūnga'])).toMatch(/^application name missing before --status/);
    expect(usageProblem(['optouts', 'list', '--app'])).toMatch(/^application name missing before --app/);
  });

  it('says a password given empty, or only spaces, is empty', () => {
    expect(usageProblem(['apps', 'set-password', 'kāinga', ''])).toBe('the password is empty');
    expect(usageProblem(['apps', 'set-password', 'kāinga', '   '])).toBe('the password is empty');
    expect(usageProblem(['apps', 'set-password', 'kāinga', 'pā💥'])).toBeUndefined();
  });

  it('says a template name given empty is empty', () => {
    expect(usageProblem(['templates', 'set', 'acme', '', 'Kia ora 👋🏽'])).toBe('template name is empty');
    expect(usageProblem(['im-templates', 'set', '商店', '0b6c7c1e-1f7a-4d1e-9a61-3f5d2a0c9e11', '', 'mi_NZ', 'Kia ora {{name}}'])).toBe(
      'template name is empty',
    );
  });

  it('refuses an Intelligent Messaging rate limit that is not a whole number 0..100 or default, naming what it got', () => {
    for (const limit of ['-1', '', '101', '2.5', '1e1', ' 5', '0x10', 'tekau']) {
      expect(usageProblem(['apps', 'set-im-rate-limit', 'kāinga', limit]), JSON.stringify(limit)).toBe(
        `the rate limit is a whole number of requests per second, 0..100, or 'default' (got ${JSON.stringify(limit)})`,
      );
    }
    for (const limit of ['0', '20', '100', 'default']) expect(usageProblem(['apps', 'set-im-rate-limit', '商店', limit]), limit).toBeUndefined();
  });

  it('refuses a source address no send could use, naming it and how to write it, a number split by the shell included', () => {
    expect(usageProblem(['apps', 'set-sources', 'kāinga-ā-iwi', '+64', '21-555', '000'])).toBe(
      'source address "21-555" cannot be sent from: write a number without spaces or dashes: 21555 (if "+64 21-555 000" is one number: +6421555000)',
    );
    expect(usageProblem(['apps', 'set-sources', 'kāinga-ā-iwi', '+64 21-555 000'])).toBe(
      'source address "+64 21-555 000" cannot be sent from: write a number without spaces or dashes: +6421555000',
    );
    expect(usageProblem(['apps', 'set-sources', '商店', '4001', 'GLOBEXXXXXXXXXX'])).toBe(
      'source address "GLOBEXXXXXXXXXX" cannot be sent from: an alphanumeric sender is at most 11 characters, not 15',
    );
    expect(usageProblem(['apps', 'set-sources', '商店', 'Kāinga'])).toBe(
      'source address "Kāinga" cannot be sent from: an SMSC carries letters, digits and punctuation of ASCII, not "ā"',
    );
    expect(usageProblem(['apps', 'set-sources', '商店', '4001', ''])).toBe('source address "" cannot be sent from: it is blank');
  });

  it('takes every source address a send takes, and none at all', () => {
    for (const addresses of [['+6421555000', '4001', '006421555000'], ['ACME', 'Air NZ', 'ABCDEFGHIJK'], []]) {
      expect(usageProblem(['apps', 'set-sources', 'kāinga-ā-iwi', ...addresses]), addresses.join(' ')).toBeUndefined();
    }
  });

  it('finds nothing wrong with command lines the commands take, empty values where they mean something included', () => {
    for (const args of [
      ['apps', 'list'],
      ['apps', 'create', 'kāinga-ā-iwi', '--password', 'x'],
      ['apps', 'set-im-attempts', '商店', ''],
      ['apps', 'set-callbacks', 'acme', '--status', ''],
      ['templates', 'set', 'acme', 'nau-mai', ''],
      ['optouts', 'list'],
      ['campaigns', 'list'],
      ['blocklist', 'add', '+6421'],
      ['blocklist', 'remove', '--app', 'acme', '0064 21 999'],
      ['apps', 'create'],
    ]) {
      expect(usageProblem(args), args.join(' ')).toBeUndefined();
    }
  });
});
