import DefaultTheme from 'vitepress/theme'
import ConfigTable from '../../components/ConfigTable.vue'

export default { ...DefaultTheme, enhanceApp({ app }) { app.component('ConfigTable', ConfigTable) } }
