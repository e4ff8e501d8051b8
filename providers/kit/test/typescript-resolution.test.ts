import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';

/**
 * A third party's adapter in TypeScript with the compiler's long-standing defaults (CommonJS, `node`
 * module resolution) imports the contract suite as the README writes it: subpaths are in `exports`, which
 * only `node16`/`bundler` resolution reads, so the kit names their types in `typesVersions` too (a
 * review's finding: TS2307).
 */
describe("the kit's subpaths in a third party's TypeScript project", () => {
  it('resolve under moduleResolution node as under node16', function () {
    this.timeout(60_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-f-ts-'));
    try {
      fs.mkdirSync(path.join(dir, 'node_modules', '@switchboard'), { recursive: true });
      fs.symlinkSync(path.resolve(__dirname, '../..'), path.join(dir, 'node_modules', '@switchboard', 'provider-kit'));
      const file = path.join(dir, 'adapter.test.ts');
      fs.writeFileSync(
        file,
        "import { runAdapterContract } from '@switchboard/provider-kit/contract';\n" +
          "import { ProviderError } from '@switchboard/provider-kit';\n" +
          'export const used = [runAdapterContract, ProviderError];\n',
      );
      for (const [module, moduleResolution] of [
        [ts.ModuleKind.CommonJS, ts.ModuleResolutionKind.Node10],
        [ts.ModuleKind.Node16, ts.ModuleResolutionKind.Node16],
      ] as const) {
        const program = ts.createProgram([file], {
          module,
          moduleResolution,
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        });
        const errors = ts
          .getPreEmitDiagnostics(program)
          .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
        expect(errors, ts.ModuleResolutionKind[moduleResolution]).to.deep.equal([]);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
