// TRON address encoding (base58check of 0x41 + 20 bytes ⇄ the 0x hex TRON's JSON-RPC speaks), on
// pairs published by others, each with where it came from.
import test from 'ava';
import { hexToTron, isTronAddress, tronToHex } from '../../src/core/watchers/tron-address.ts';

const KNOWN: { base58: string; hex41: string; source: string }[] = [
  // the USDT-TRC20 contract; also in the Go table below
  { base58: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', hex41: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c',
    source: 'github.com/oxygenpay/oxygen internal/kms/wallet/tron_test.go (TestTronProvider_Generate/Base58ToHex)' },
  { base58: 'TBREsCfBdPyD612xZnwvGPux7osbXvtzLh', hex41: '410fe47f49fd91f0edb7fa2b94a3c45d9c2231709c',
    source: 'github.com/oxygenpay/oxygen internal/kms/wallet/tron_test.go' },
  { base58: 'TLrPF5aTqtqLxFo1Y69jpQvZ2T4ydkX9pC', hex41: '41775f057150b85086f456aac88fd52ba8e35db282',
    source: 'github.com/oxygenpay/oxygen internal/kms/wallet/tron_test.go' },
  { base58: 'THPvaUhoh2Qn2y9THCZML3H815hhFhn5YC', hex41: '41517591d35d313bf6a5e33098284502b045e2bc08',
    source: 'github.com/oxygenpay/oxygen internal/kms/wallet/tron_test.go' },
  { base58: 'TBhCfAytTEh52WFL6HYr64i2nmc3u3TCUp', hex41: '4112e94f5a3c88b17d2f6e0b9a45cd310f8e7a6d29',
    source: 'tronprotocol.github.io/documentation-zh/clients/wallet-cli/typescript/commands/encoding/convert/' },
  { base58: 'TQHgMpVzWkhSsRB4BzZgmV8uW4cFL8eaBr', hex41: '419D1015E669C2DF831003C5C54CEB48DA613D9979',
    source: 'metacpan.org/pod/CryptoTron::AddrTools (SYNOPSIS)' },
];

test('tron address: known pairs convert both ways', (t) => {
  for (const k of KNOWN) {
    const hex = `0x${k.hex41.slice(2).toLowerCase()}`;
    t.is(tronToHex(k.base58), hex, k.source);
    t.is(hexToTron(hex), k.base58, k.source);
    t.is(hexToTron(k.hex41), k.base58, `${k.source} (41-hex form)`);
    t.is(hexToTron(hex.toUpperCase().replace('0X', '0x')), k.base58, 'hex in any case');
    t.true(isTronAddress(k.base58));
  }
});

test('tron address: a bad checksum, a wrong prefix or length, an EVM address are refused', (t) => {
  const usdt = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
  // one character changed: the checksum no longer matches
  t.false(isTronAddress(`${usdt.slice(0, -1)}u`));
  t.false(isTronAddress(`${usdt}1`));
  t.false(isTronAddress('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c'));
  t.false(isTronAddress(''));
  // a valid base58check string whose payload is not 0x41 + 20 bytes (a Bitcoin P2PKH address, prefix 0x00)
  t.false(isTronAddress('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'));
  t.throws(() => tronToHex('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'), { message: /0x41/ });
  t.throws(() => hexToTron('0x1234'), { message: /20-byte/ });
});
