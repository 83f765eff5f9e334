// A StrykerJS ignorer for `npm run test:mutation:model` (stryker.model.config.json): a state's
// `description` in machines/ is documentation for Stately and `qmd lifecycle export`, not
// behaviour, so the generated tests have nothing to say about it. `npm run test:mutation`
// keeps mutating it: test/viz/artifacts.test.ts checks the descriptions there.
import { declareValuePlugin, PluginKind } from '@stryker-mutator/api/plugin';

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'state-descriptions', {
    shouldIgnore(path) {
      const parent = path.parentPath;
      const isDescription =
        path.isStringLiteral() &&
        parent?.isObjectProperty() &&
        parent.node.value === path.node &&
        parent.node.key.type === 'Identifier' &&
        parent.node.key.name === 'description';
      return isDescription ? 'a state description is documentation (test/viz/artifacts.test.ts checks it)' : undefined;
    },
  }),
];
